# The coordinator's fleet logic: verdicts, learning, conflicts, staleness,
# replays, restore and a 10,000-node fleet, from device arrays made from
# hwdb entries.
dt_add_suite(test_reconcile SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_reconcile.c
             LIBS dt_reconcile)
