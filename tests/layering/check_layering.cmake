# The dependency rules of docs/architecture.md, checked on every #include under ROOT/src and
# ROOT/include: each stage of the pipeline names the stages it may include, and the public
# headers include nothing but each other and the standard library.
#   cmake -D ROOT=<tree> -P check_layering.cmake     (fails, listing every violation)
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -D ROOT=<source tree> -P check_layering.cmake")
endif()

# stage → the stages it may include besides itself ("jx" is the public headers).
set(allowed_support jx)
set(allowed_core jx support trace)  # an Array is a concrete buffer or a tracer
set(allowed_trace jx support core jaxpr)
set(allowed_jaxpr jx support core trace)
set(allowed_transforms jx support core trace jaxpr)
set(allowed_hlo jx support core)
set(allowed_passes jx support core hlo)
set(allowed_lower jx support core jaxpr hlo)
set(allowed_primitives jx support core trace jaxpr transforms hlo lower)
set(allowed_codegen jx support core hlo)
set(allowed_runtime jx support core hlo codegen)
set(allowed_backend jx support core hlo passes codegen runtime)
set(allowed_library jx support core trace)
set(allowed_io jx support core)
set(allowed_api jx support core trace jaxpr transforms hlo lower primitives passes codegen
    runtime backend library io)

set(violations "")
file(GLOB_RECURSE sources RELATIVE ${ROOT}/src ${ROOT}/src/*.cpp ${ROOT}/src/*.hpp
     ${ROOT}/src/*.def)
foreach(source ${sources})
  string(REGEX MATCH "^[^/]+" stage ${source})
  if(NOT DEFINED allowed_${stage})
    list(APPEND violations "src/${source}: stage '${stage}' has no rule in check_layering.cmake")
    continue()
  endif()
  file(STRINGS ${ROOT}/src/${source} includes REGEX "^#include \"[^\"]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include \"([^/\"]+)/.*" "\\1" target "${line}")
    if(target STREQUAL stage OR target IN_LIST allowed_${stage})
      continue()
    endif()
    list(APPEND violations "src/${source}: ${stage} may not include ${target} (${line})")
  endforeach()
endforeach()

# Public headers: other public headers ("jx/...") and standard headers (<name>, no path).
file(GLOB_RECURSE headers RELATIVE ${ROOT}/include ${ROOT}/include/*.hpp)
foreach(header ${headers})
  file(STRINGS ${ROOT}/include/${header} includes REGEX "^#include ")
  foreach(line ${includes})
    if(line MATCHES "^#include \"jx/" OR line MATCHES "^#include <[a-z_0-9]+>")
      continue()
    endif()
    list(APPEND violations "include/${header}: a public header includes ${line}")
  endforeach()
endforeach()

list(LENGTH sources count)
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering violations:\n  ${text}")
endif()
message(STATUS "layering: ${count} source files follow the dependency rules")
