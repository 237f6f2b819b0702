# The asynchronous client of dt_rpc (proto/rpc/rpc_async.c), over real
# loopback gRPC with the rpc_certs certificates (tests/rpc.cmake).
if(TARGET dt_rpc)
  dt_add_suite(test_rpc_async SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_rpc_async.c
               LIBS dt_rpc TIMEOUT 120)
  set_tests_properties(test_rpc_async PROPERTIES FIXTURES_REQUIRED rpc_tls
                       ENVIRONMENT "GRPC_VERBOSITY=NONE")
endif()
