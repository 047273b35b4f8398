# Installs jx from BUILD_DIR into WORK_DIR/prefix, then configures, builds and runs consumer/
# against it and checks what it prints. Run by ctest as `cmake -D... -P check_install.cmake`.
# Inputs: BUILD_DIR WORK_DIR GENERATOR MAKE_PROGRAM CXX CXX_FLAGS.
cmake_minimum_required(VERSION 3.25)
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})  # nothing left from an earlier run may satisfy find_package

# Runs a command; stops the test with its output when it fails. Leaves the output in `out`.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
step("configure consumer" ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/consumer
     -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
     -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("run consumer" ${WORK_DIR}/build/app)
message("${out}")

foreach(expected "Array([-1., -2., -3.], dtype=float32)"
                 "{ lambda ; a:f32[3]. let b:f32[3] = neg a in (b,) }")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "consumer output lacks: ${expected}")
  endif()
endforeach()
