# Build options shared by every component. One switch for sanitizers (see ../shared/STYLE.md).
option(HARNESS_BUILD_TESTS "Build unit, property and integration tests" ON)
option(HARNESS_BUILD_BENCHMARKS "Build Google Benchmark programs" ON)
option(HARNESS_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(HARNESS_WERROR "Treat compiler warnings as errors" OFF)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(HARNESS_CCACHE ccache)
if(HARNESS_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${HARNESS_CCACHE}")
endif()

add_library(harness_warnings INTERFACE)
target_compile_options(harness_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(HARNESS_WERROR)
  target_compile_options(harness_warnings INTERFACE -Werror)
endif()

if(HARNESS_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
