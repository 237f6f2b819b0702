# The remedies for a drifted node: the agent's sysfs fixtures probed,
# verified and assessed; the rules validated by the model and fed to the
# planner with the node's predicted slices.
dt_add_suite(test_remedy SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_remedy.c
             LIBS dt_remedy dt_agent dt_plan)
set_tests_properties(test_remedy PROPERTIES FIXTURES_REQUIRED agent_sysfs)

# The remedies both ways and plans that count running pods, against the real
# API server and kubectl of the kube fixture (tests/kube.cmake).
if(DRATOPO_KUBE_TESTS)
  dt_add_script_test(kube_fleet_e2e ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_fleet.sh)
  set_tests_properties(kube_fleet_e2e PROPERTIES FIXTURES_REQUIRED "kube;agent_sysfs"
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${DT_KUBE_CLUSTER_DIR}" TIMEOUT 300)
endif()
