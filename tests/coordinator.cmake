# The coordinator end to end: real gRPC over loopback with mTLS (certificates
# from tests/tls/mkcerts.sh), real SQLite files in temporary directories,
# agents on the sysfs fixtures, daemons started and stopped by the script on
# ports they pick themselves (":0", read back from their start line).
# coord_client makes the calls a good agent never makes, and streams reports
# for the SIGKILL test.
add_executable(coord_client ${CMAKE_CURRENT_LIST_DIR}/tools/coord_client.c)
target_link_libraries(coord_client PRIVATE dt_agent_run dt_rpc dt_proto)
set_target_properties(coord_client PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)

add_test(NAME coordinator_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/coordinator.sh ${PROJECT_BINARY_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(coordinator_e2e PROPERTIES FIXTURES_REQUIRED agent_sysfs TIMEOUT 600
                     ENVIRONMENT "GRPC_VERBOSITY=NONE")

# TLS settings that do not fit, end to end (QA-27): the CLI's one-line
# diagnoses, the agent's report_failed, the coordinator's
# tls_handshake_failed. GRPC_VERBOSITY stays unset: the CLI must keep gRPC's
# own lines off stderr by itself.
dt_add_script_test(tls_e2e ${CMAKE_CURRENT_LIST_DIR}/e2e/tls.sh)
set_tests_properties(tls_e2e PROPERTIES FIXTURES_REQUIRED agent_sysfs TIMEOUT 120)

# The handlers called directly (coord_invoke), over a store stub that
# fails on demand (store_wrap: the store's backend interface).
dt_add_suite(test_coord SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_coord.c
             LIBS dt_coord dt_agent_run INTERNAL coordinator/store)
set_tests_properties(test_coord PROPERTIES FIXTURES_REQUIRED agent_sysfs
                     ENVIRONMENT "GRPC_VERBOSITY=NONE")
# Nodes forgotten, one coordinator per database, lifts as objects, device
# names as the drivers write them (tests/e2e/housekeeping.sh).
add_test(NAME housekeeping_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/housekeeping.sh ${PROJECT_BINARY_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(housekeeping_e2e PROPERTIES FIXTURES_REQUIRED agent_sysfs TIMEOUT 300)
