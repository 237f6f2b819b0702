# Project-wide compile flags and the helpers every module's fragment uses.

set(DT_WARNINGS -Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wpointer-arith
    -Wstrict-prototypes -Wmissing-prototypes -Wwrite-strings -Wvla
    -Wno-missing-field-initializers)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  # messages are cut to their buffers on purpose (clang has no such warning)
  list(APPEND DT_WARNINGS -Wno-format-truncation)
endif()
if(DRATOPO_WERROR)
  list(APPEND DT_WARNINGS -Werror)
endif()
add_compile_options(${DT_WARNINGS})
add_compile_definitions(_GNU_SOURCE)

if(DRATOPO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# dt_add_suite(NAME SOURCES src... LIBS lib... [INTERNAL module-dir...])
# One CUnit executable per module, registered with ctest under NAME.
# INTERNAL names the modules (folders relative to the top) whose internal
# headers (<module>/internal/) the suite tests; nothing else sees them.
# Tests find their fixtures through DT_SOURCE_DIR and DT_BINARY_DIR.
function(dt_add_suite name)
  cmake_parse_arguments(S "" "TIMEOUT" "SOURCES;LIBS;INTERNAL" ${ARGN})
  add_executable(${name} ${S_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
  foreach(_mod ${S_INTERNAL})
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/${_mod}/internal)
  endforeach()
  target_compile_definitions(${name} PRIVATE
    DT_SOURCE_DIR="${PROJECT_SOURCE_DIR}" DT_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(${name} PRIVATE ${S_LIBS} PkgConfig::CUNIT)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  if(NOT S_TIMEOUT)
    set(S_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${S_TIMEOUT})
endfunction()

# Each module keeps its own build rules in a fragment (common/quantity.cmake,
# common/cel.cmake, ...) so that modules can grow without touching each other.
macro(dt_include_fragments dir)
  file(GLOB _dt_frags CONFIGURE_DEPENDS ${dir}/*.cmake)
  list(SORT _dt_frags)
  foreach(_f ${_dt_frags})
    include(${_f})
  endforeach()
endmacro()

# dt_link_present(TARGET lib...): link TARGET with those of the libs that exist.
function(dt_link_present target)
  foreach(lib ${ARGN})
    if(TARGET ${lib})
      target_link_libraries(${target} PRIVATE ${lib})
    endif()
  endforeach()
endfunction()

# dt_add_script_test(NAME SCRIPT): an end-to-end shell test that drives the
# built binaries; it gets the build directory as $1.
function(dt_add_script_test name script)
  add_test(NAME ${name} COMMAND bash ${script} ${PROJECT_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()
