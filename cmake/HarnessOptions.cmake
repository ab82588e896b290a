# Build options shared by every component. One switch for sanitizers.
option(HARNESS_BUILD_TESTS "Build unit, property and integration tests" ON)
option(HARNESS_BUILD_BENCHMARKS "Build Google Benchmark programs" ON)
option(HARNESS_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(HARNESS_WERROR "Treat compiler warnings as errors" OFF)
option(HARNESS_TSAN "Build with ThreadSanitizer (the tsan preset: the net library's tests)" OFF)
option(HARNESS_FUZZ "Build the libFuzzer targets of fuzz/ (clang; ASan and UBSan on everything)" OFF)
option(HARNESS_SPLIT_DWARF "Keep gcc's debug information in .dwo files beside the objects" ON)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

# ccache hashes paths under the checkout relative to it (CCACHE_BASEDIR) and not the working
# directory (CCACHE_NOHASHDIR; split DWARF records it), as scripts/build.sh exports them, however
# the build is started: a `cmake --build` run without build.sh filled the cache with entries
# keyed by the checkout's absolute path, which no other clone (CI's) could use.
find_program(HARNESS_CCACHE ccache)
if(HARNESS_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND}" -E env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}"
                                  CCACHE_NOHASHDIR=true "${HARNESS_CCACHE}")
endif()

# With full debug information in every program, the default build's 170 test programs took 11 GB
# (250 MB each, most of it the same libraries' DWARF copied again) and a clean CI clone 24 GB: a
# shared disk ran out during a CI link. Split DWARF leaves the debug information in one .dwo per
# object (gdb reads them from the build tree). gcc 12 then adds GNU pubnames to every object
# whatever -gno-pubnames says (80% of each program): gold consumes them into a .gdb_index and
# drops them, and links faster than bfd. Programs shrink to their code and line tables (the
# simulator: 312 MB -> 66 MB).
if(HARNESS_SPLIT_DWARF AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options($<$<CONFIG:Debug,RelWithDebInfo>:-gsplit-dwarf>)
  find_program(HARNESS_LD_GOLD ld.gold)
  if(HARNESS_LD_GOLD)
    add_link_options($<$<CONFIG:Debug,RelWithDebInfo>:-fuse-ld=gold>
                     $<$<CONFIG:Debug,RelWithDebInfo>:-Wl,--gdb-index>)
  endif()
endif()

add_library(harness_warnings INTERFACE)
target_compile_options(harness_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(HARNESS_WERROR)
  target_compile_options(harness_warnings INTERFACE -Werror)
endif()

if((HARNESS_SANITIZE OR HARNESS_FUZZ) AND HARNESS_TSAN)
  message(FATAL_ERROR "HARNESS_TSAN cannot be combined with HARNESS_SANITIZE or HARNESS_FUZZ")
endif()
# The one place the ASan + UBSan flags are set: the asan preset (clang-16, -O1) turns on both
# HARNESS_SANITIZE and HARNESS_FUZZ, so that one build directory compiles every object once for
# the test programs and the fuzz targets (CI's asan and fuzz stages, scripts/test.sh).
if(HARNESS_SANITIZE OR HARNESS_FUZZ)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(HARNESS_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  # ThreadSanitizer does not model standalone fences (gcc: "atomic_thread_fence is not supported
  # with -fsanitize=thread"). Asio's fenced blocks only add fences around handler upcalls whose
  # ordering its scheduler's mutex already gives; the null fenced block (Asio's single-threaded
  # choice, boost/asio/detail/fenced_block.hpp) leaves TSan the synchronisation it can see.
  add_compile_definitions(BOOST_ASIO_DISABLE_FENCED_BLOCK)
  add_link_options(-fsanitize=thread)
endif()
if(HARNESS_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HARNESS_FUZZ needs clang for libFuzzer (the fuzz preset uses clang++-16)")
  endif()
  # Coverage instrumentation for every object (test programs too, so that they share the
  # libraries' objects; without libFuzzer linked in, its hooks are the sanitizer runtime's no-op
  # defaults); only the fuzz programs link libFuzzer's main (fuzz/CMakeLists.txt). libstdc++'s checked operator[], front(), back()... turn out-of-range
  # accesses that ASan cannot see (inside a vector's capacity) into aborts.
  add_compile_options(-fsanitize=fuzzer-no-link -D_GLIBCXX_ASSERTIONS)
endif()
