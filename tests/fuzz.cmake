# Reliability: the differential suites (allocator against a brute force,
# planner against the exhaustive optimum), the libFuzzer targets for every
# input boundary, and the replay of every fuzz corpus. See docs/reliability.md.
#
# dt_fuzz_target(NAME SOURCES src... LIBS lib... CORPUS dir...) builds
#   replay_NAME  the target's entry point with fuzz_replay.c's main(): always
#                built, and registered as ctest fuzz_NAME_replay over CORPUS,
#                so every corpus file and regression input runs on every
#                build (gcc, no libFuzzer needed);
#   fuzz_NAME    the libFuzzer binary, with -DDRATOPO_FUZZ=ON (clang).
set(DT_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR}/fuzz)

function(dt_fuzz_target name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS;CORPUS" ${ARGN})
  add_executable(replay_${name} ${F_SOURCES} ${DT_FUZZ_DIR}/fuzz_replay.c)
  target_include_directories(replay_${name} PRIVATE ${DT_FUZZ_DIR})
  target_link_libraries(replay_${name} PRIVATE ${F_LIBS})
  set_target_properties(replay_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME fuzz_${name}_replay COMMAND replay_${name} ${F_CORPUS}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(fuzz_${name}_replay PROPERTIES TIMEOUT 300)
  if(DRATOPO_FUZZ AND NOT TARGET fuzz_${name})
    add_executable(fuzz_${name} ${F_SOURCES})
    target_include_directories(fuzz_${name} PRIVATE ${DT_FUZZ_DIR})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${name} PRIVATE ${F_LIBS})
    set_target_properties(fuzz_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  endif()
endfunction()

# Coverage feedback from the libraries the targets drive (dt_cel does this
# itself in common/cel/CMakeLists.txt).
if(DRATOPO_FUZZ)
  foreach(_lib dt_units dt_model dt_alloc dt_hwdb dt_plan dt_topo dt_agent)
    if(TARGET ${_lib})
      target_compile_options(${_lib} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
  endforeach()
endif()

# ---- differential suites ----
dt_add_suite(test_alloc_diff
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_alloc_diff.c ${DT_FUZZ_DIR}/gen_alloc.c
  LIBS dt_alloc)
target_include_directories(test_alloc_diff PRIVATE ${DT_FUZZ_DIR})

# ---- fuzz targets and their corpora ----
# fuzz_cel and fuzz_doc are built by tests/cel.cmake and tests/doc.cmake;
# here only their replay.
dt_fuzz_target(cel SOURCES ${DT_FUZZ_DIR}/fuzz_cel.c LIBS dt_cel CORPUS ${DT_FUZZ_DIR}/cel_corpus)
dt_fuzz_target(doc SOURCES ${DT_FUZZ_DIR}/fuzz_doc.c LIBS dt_doc
  CORPUS ${PROJECT_SOURCE_DIR}/tests/fixtures/doc/malformed)
dt_fuzz_target(alloc SOURCES ${DT_FUZZ_DIR}/fuzz_alloc.c ${DT_FUZZ_DIR}/gen_alloc.c
  LIBS dt_alloc CORPUS ${DT_FUZZ_DIR}/alloc_corpus)

dt_add_suite(test_plan_diff
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan_diff.c ${DT_FUZZ_DIR}/gen_plan.c
          ${DT_FUZZ_DIR}/gen_alloc.c
  LIBS dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base m)
target_include_directories(test_plan_diff PRIVATE ${DT_FUZZ_DIR})
dt_fuzz_target(plan SOURCES ${DT_FUZZ_DIR}/fuzz_plan.c ${DT_FUZZ_DIR}/gen_plan.c
  ${DT_FUZZ_DIR}/gen_alloc.c
  LIBS dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base m
  CORPUS ${DT_FUZZ_DIR}/plan_corpus)
dt_fuzz_target(hwdb_extra SOURCES ${DT_FUZZ_DIR}/fuzz_hwdb_extra.c
  LIBS dt_hwdb dt_model dt_doc dt_units dt_base
  CORPUS ${DT_FUZZ_DIR}/hwdb_extra_corpus)
if(TARGET dt_agent)
  dt_fuzz_target(sysfs SOURCES ${DT_FUZZ_DIR}/fuzz_sysfs.c LIBS dt_agent dt_doc
    CORPUS ${DT_FUZZ_DIR}/sysfs_corpus)
endif()

# Findings the reliability checks made in other modules (docs/reliability.md).
add_test(NAME rel_regress COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/rel_regress.sh
         ${PROJECT_BINARY_DIR} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(rel_regress PROPERTIES TIMEOUT 120)
