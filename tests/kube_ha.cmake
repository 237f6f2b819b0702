# High availability (issue 19): leader election against the real API server
# of ctest's kube_up fixture (tests/kube.cmake), and the coordinators' HA
# end-to-end test. Its unit suite, test_kube_leader, is in kube.cmake.
add_executable(ha_agents ${CMAKE_CURRENT_LIST_DIR}/tools/ha_agents.c)
target_link_libraries(ha_agents PRIVATE dt_agent_run dt_rpc dt_proto dt_cluster dt_kube)
set_target_properties(ha_agents PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)

if(DRATOPO_KUBE_TESTS)
  dt_add_suite(test_leader_cluster SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_leader_cluster.c
    LIBS dt_kube INTERNAL kube)
  set_tests_properties(test_leader_cluster PROPERTIES FIXTURES_REQUIRED kube
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  # Three coordinators, SIGKILL, SIGSTOP and SIGTERM, on the default timings
  # (about a minute and a half).
  dt_add_script_test(ha_e2e ${CMAKE_CURRENT_LIST_DIR}/e2e/ha.sh)
  set_tests_properties(ha_e2e PROPERTIES FIXTURES_REQUIRED "kube;agent_sysfs" RESOURCE_LOCK kube
    TIMEOUT 300 ENVIRONMENT "DT_KUBE_DIR=${_kdir};GRPC_VERBOSITY=NONE")
endif()
