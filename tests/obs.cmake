# The observability module: logfmt lines, the metrics registry's text, and
# the HTTP endpoint over a raw socket.
dt_add_suite(test_obs SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_obs.c LIBS dt_obs_http)
