# Lists the test cases of a Catch2 v2 binary and writes a ctest file with one test per case.
# Catch's own catch_discover_tests splits a name at every `;` (CMake's list separator) and cannot
# give the tests two environment variables; this script does both.
# Run after each link as: cmake -D EXE=... -D OUT=... -D TIMEOUT=... -D ENV=... -P this_file.
# ENV is a list of VAR=value for every test (may be empty).
cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND ${EXE} --list-test-names-only
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc MATCHES "^[0-9]+$")  # Catch exits with the number of tests; a crash gives text
  message(FATAL_ERROR "${EXE} --list-test-names-only failed (${rc}):\n${out}${err}")
endif()

string(REPLACE ";" "\\;" out "${out}")  # escaped, a `;` in a name does not split the list
string(REPLACE "\n" ";" lines "${out}")
set(script "")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REPLACE "\\;" ";" name "${line}")
  # Catch reads its argument as a test spec: escape the characters that have a meaning there.
  string(REGEX REPLACE "([],[\\\\\"*~])" "\\\\\\1" spec "${name}")
  # --warn NoTests: a spec that matches no test case fails instead of passing empty.
  string(APPEND script
         "add_test([==[${name}]==] [==[${EXE}]==] [==[${spec}]==] --warn NoTests)\n"
         "set_tests_properties([==[${name}]==] PROPERTIES TIMEOUT ${TIMEOUT}"
         " ENVIRONMENT [==[${ENV}]==] SKIP_REGULAR_EXPRESSION [==[JX_SKIPPED:]==])\n")
endforeach()
file(WRITE ${OUT} "${script}")
