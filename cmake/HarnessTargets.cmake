# Helpers that keep component CMakeLists short and uniform.

# harness_test(NAME <target> SOURCES ... LIBS ... LABELS unit|scenario|property|integration|e2e
#              [TIMEOUT seconds])
# Each GoogleTest case becomes one CTest test carrying the labels, plus a label naming the
# component (the top folder: core, net, injector, ...); the target <component>_tests builds all
# of a component's test programs (the tsan preset builds and runs only net's).
function(harness_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;FIXTURES" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT HARNESS_BUILD_TESTS)
    return()
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main harness_warnings)
  file(RELATIVE_PATH folder "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  string(REGEX REPLACE "/.*" "" component "${folder}")
  if(NOT TARGET ${component}_tests)
    add_custom_target(${component}_tests)
  endif()
  add_dependencies(${component}_tests ${T_NAME})
  gtest_discover_tests(${T_NAME}
    DISCOVERY_MODE PRE_TEST
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  # The discovered tests' properties are set by a file CTest includes after the discovery one
  # (which defines ${T_NAME}_TESTS). Not through gtest_discover_tests(PROPERTIES): CMake 3.25's
  # GoogleTestAddTests.cmake flattens that list, so LABELS kept only its first label and TIMEOUT
  # and ENVIRONMENT were paired off with the wrong values and lost.
  set(properties_file "${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_properties.cmake")
  # Under TSan, the suppressions file (cmake/tsan-suppressions.txt says why) is appended to
  # whatever TSAN_OPTIONS the caller set.
  set(sanitizer_options "")
  if(HARNESS_TSAN)
    string(CONCAT sanitizer_options "\n    ENVIRONMENT_MODIFICATION \"TSAN_OPTIONS=string_append: "
           "suppressions=${PROJECT_SOURCE_DIR}/cmake/tsan-suppressions.txt\"")
  endif()
  # FIXTURES: a CTest fixture every test of the binary requires (its setup test runs first).
  set(fixture_options "")
  if(T_FIXTURES)
    set(fixture_options " FIXTURES_REQUIRED ${T_FIXTURES}")
  endif()
  file(WRITE "${properties_file}"
       "foreach(test IN LISTS ${T_NAME}_TESTS)\n"
       "  set_tests_properties(\"\${test}\" PROPERTIES\n"
       "    LABELS \"${T_LABELS};${component}\" TIMEOUT ${T_TIMEOUT}${fixture_options}\n"
       "    ENVIRONMENT \"HARNESS_SOURCE_DIR=${PROJECT_SOURCE_DIR};"
       "HARNESS_BINARY_DIR=${PROJECT_BINARY_DIR}\"${sanitizer_options})\n"
       "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${properties_file}")
endfunction()

# harness_benchmark(NAME <target> SOURCES ... LIBS ...)
function(harness_benchmark)
  cmake_parse_arguments(B "" "NAME" "SOURCES;LIBS" ${ARGN})
  if(NOT HARNESS_BUILD_BENCHMARKS)
    return()
  endif()
  add_executable(${B_NAME} ${B_SOURCES})
  target_link_libraries(${B_NAME} PRIVATE ${B_LIBS} benchmark::benchmark harness_warnings)
endfunction()
