# deploy/namespace.yaml and deploy/agent.yaml applied to the test control
# plane (kube fixture, tests/kube.cmake): strict validation, Pod Security
# levels, the refresh CronJob's RBAC.
if(DRATOPO_KUBE_TESTS)
  add_test(NAME deploy_cluster_e2e
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/deploy_cluster.sh ${PROJECT_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(deploy_cluster_e2e PROPERTIES FIXTURES_REQUIRED kube RESOURCE_LOCK kube
                       TIMEOUT 300 ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
endif()
