# Suite of the observability module (logfmt, metrics, the HTTP endpoint).
if(TARGET dt_obs)
  dt_add_suite(test_obs SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_obs.c LIBS dt_obs)
endif()
