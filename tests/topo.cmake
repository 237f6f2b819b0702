# The topology model on its own: built from device lists, shape keys,
# verification against a given entry, predicted slices. No sysfs, no libpci.
dt_add_suite(test_topo SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_topo.c LIBS dt_topo)
