# TLS files watched and reloaded under a running watcher (certificates from
# mkcerts.sh: fixture rpc_tls, tests/rpc.cmake).
dt_add_suite(test_certwatch SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_certwatch.c
             LIBS dt_certwatch TIMEOUT 120)
set_tests_properties(test_certwatch PROPERTIES FIXTURES_REQUIRED rpc_tls)
