# The fleet's objects in the cluster (coordinator/cluster): NodeTopology and
# LearnedType statuses made from fleet records and read back, digests,
# staleness wording, refusals. No API server needed.
dt_add_suite(test_cluster SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_cluster.c
             LIBS dt_cluster)
