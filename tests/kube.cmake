# The Kubernetes client: test_kube needs no API server (a scripted HTTP
# server plays it); the cluster suite runs against the control plane that
# tools/kube/cluster.sh starts (DRATOPO_KUBE_TESTS, see below).
dt_add_suite(test_kube SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_kube.c
  LIBS dt_kube INTERNAL kube)
