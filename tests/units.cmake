# Suites of the units module: quantities, semantic versions, RFC 3339 times.
dt_add_suite(test_quantity SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_quantity.c LIBS dt_units m)
dt_add_suite(test_semver SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_semver.c LIBS dt_units)
dt_add_suite(test_timestamp SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_timestamp.c LIBS dt_units)
