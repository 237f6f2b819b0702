# Fault tests against the real coordinator and agent binaries
# (tests/e2e/faults.sh): a SIGKILL while agents report, a full and a
# read-only database file system, a database turning read-only or failing
# with EIO while the coordinator runs, corrupt databases at start,
# misbehaving clients next to working agents, and a GPU leaving a node's
# sysfs.
if(TARGET dratopo-coordinator AND TARGET dt_agent AND TARGET dt_store)
  foreach(case restart disk rofs corrupt clients sysfs)
    add_test(NAME fault_${case}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/faults.sh ${PROJECT_BINARY_DIR} ${case}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(fault_${case} PROPERTIES TIMEOUT 180)
  endforeach()
  # The sysfs case builds its own fixture tree; the bench cases need bench_load.
  # rofs preloads this shim into the coordinator: it fails the database's
  # writes and syncs while a trigger file exists (a tmpfs cannot be
  # remounted read-only while the files are open). Built only for tests.
  add_library(fault_io MODULE ${CMAKE_CURRENT_LIST_DIR}/tools/fault_io.c)
  target_link_libraries(fault_io PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(fault_io PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
                        ${PROJECT_BINARY_DIR}/tests)
endif()
