# The QA pass's end-to-end regression script (tests/e2e/qa.sh): user-style
# cases across validate, hwdb, allocate, plan and the agent.
dt_add_script_test(e2e_qa ${CMAKE_CURRENT_LIST_DIR}/e2e/qa.sh)
# Its controller cases (tests/e2e/kube_qa.sh) need the kube fixture's
# control plane (tests/kube.cmake, read before this file).
if(DRATOPO_KUBE_TESTS)
  dt_add_script_test(kube_qa ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_qa.sh)
  set_tests_properties(kube_qa PROPERTIES FIXTURES_REQUIRED kube RESOURCE_LOCK kube
    ENVIRONMENT "DT_KUBE_DIR=${PROJECT_BINARY_DIR}/kube-cluster")
endif()
