# The Kubernetes client: test_kube needs no API server (a scripted HTTP
# server plays it); the cluster suite runs against the control plane that
# tools/kube/cluster.sh starts (DRATOPO_KUBE_TESTS, see below).
dt_add_suite(test_kube SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_kube.c
  LIBS dt_kube INTERNAL kube)
dt_add_suite(test_kube_leader SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_kube_leader.c
  LIBS dt_kube INTERNAL kube)

# The cluster suite: kube_up starts a control plane under the build
# directory (building the binaries first when the cache lacks them), the
# suite runs against it, kube_down stops it. On by default where a Go
# toolchain is found; tools/dev test turns it on or off explicitly.
find_program(DT_GO go PATHS /usr/local/go/bin)
if(DT_GO)
  set(_dt_kube_default ON)
else()
  set(_dt_kube_default OFF)
endif()
option(DRATOPO_KUBE_TESTS "Run the tests that need a real kube-apiserver (built with Go)"
       ${_dt_kube_default})
if(DRATOPO_KUBE_TESTS)
  set(_kdir ${PROJECT_BINARY_DIR}/kube-cluster)   # not kube/: that is the module's build folder
  # Suites of other modules that need the control plane require the kube
  # fixture and read it from here (DT_KUBE_DIR in their environment).
  set(DT_KUBE_CLUSTER_DIR ${_kdir})
  # A control plane left behind by an interrupted run (ctest killed before
  # kube_down) is this build's own: stop it rather than refuse to start.
  add_test(NAME kube_up COMMAND sh -c "bash tools/kube/cluster.sh down '${_kdir}' >/dev/null 2>&1; exec bash tools/kube/cluster.sh up '${_kdir}'"
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # a cold build of the binaries takes long; tools/dev test builds them first
  set_tests_properties(kube_up PROPERTIES FIXTURES_SETUP kube TIMEOUT 5400 RESOURCE_LOCK kube)
  add_test(NAME kube_down COMMAND bash tools/kube/cluster.sh down ${_kdir}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(kube_down PROPERTIES FIXTURES_CLEANUP kube RESOURCE_LOCK kube)
  dt_add_suite(test_kube_cluster SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_kube_cluster.c
    LIBS dt_kube INTERNAL kube)
  set_tests_properties(test_kube_cluster PROPERTIES FIXTURES_REQUIRED kube
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  dt_add_suite(test_ctrl_cluster SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_ctrl_cluster.c
    LIBS dt_ctrl)
  set_tests_properties(test_ctrl_cluster PROPERTIES FIXTURES_REQUIRED kube
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  dt_add_script_test(kube_controller ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_controller.sh)
  set_tests_properties(kube_controller PROPERTIES FIXTURES_REQUIRED kube
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  dt_add_script_test(kube_remedy ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_remedy.sh)
  set_tests_properties(kube_remedy PROPERTIES FIXTURES_REQUIRED "kube;agent_sysfs"
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  dt_add_script_test(kube_mig ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_mig.sh)
  set_tests_properties(kube_mig PROPERTIES FIXTURES_REQUIRED kube
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  # Karpenter's own controller (kwok provider) launches the controller's
  # NodeClaims; it builds when missing (tools/dev test builds it first)
  dt_add_script_test(kube_karpenter ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_karpenter.sh)
  set_tests_properties(kube_karpenter PROPERTIES FIXTURES_REQUIRED kube TIMEOUT 2400
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
  dt_add_script_test(kube_deploy ${CMAKE_CURRENT_LIST_DIR}/e2e/kube_deploy.sh)
  set_tests_properties(kube_deploy PROPERTIES FIXTURES_REQUIRED kube
    RESOURCE_LOCK kube ENVIRONMENT "DT_KUBE_DIR=${_kdir}")
endif()
