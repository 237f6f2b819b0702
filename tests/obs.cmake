# Suite of the observability module (logfmt, metrics, the HTTP endpoint).
dt_add_suite(test_obs SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_obs.c LIBS dt_obs)
