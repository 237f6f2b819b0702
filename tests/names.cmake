# Suite of the names module: the API machinery's name rules and messages.
dt_add_suite(test_names SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_names.c LIBS dt_names)
