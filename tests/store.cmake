# The store's suite: records, schema, reopen, SIGKILL, corrupt/read-only/full
# databases (the last two mount a tmpfs in a private namespace: root only).
if(TARGET dt_store)
  dt_add_suite(test_store SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_store.c
               LIBS dt_store PkgConfig::SQLITE3)
endif()
