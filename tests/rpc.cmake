# Tests of the gRPC glue: throwaway certificates are made at test time into
# the build tree (rpc_certs, fixture rpc_tls: other suites that need mTLS
# can require it too), then the suite runs real gRPC over loopback.
set(DT_RPC_CERTS ${PROJECT_BINARY_DIR}/fixtures/tls)

add_test(NAME rpc_certs COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tls/mkcerts.sh ${DT_RPC_CERTS})
set_tests_properties(rpc_certs PROPERTIES FIXTURES_SETUP rpc_tls TIMEOUT 60)

dt_add_suite(test_rpc SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_rpc.c LIBS dt_rpc TIMEOUT 120)
# gRPC logs every refused handshake on stderr; the tests assert the codes.
set_tests_properties(test_rpc PROPERTIES FIXTURES_REQUIRED rpc_tls
                     ENVIRONMENT "GRPC_VERBOSITY=NONE")

# Why a connection fails (rpc_diagnose): dt_rpc's gRPC server with good and
# bad certificates, and small OpenSSL/plain servers for what gRPC never does.
dt_add_suite(test_rpc_tlsdiag SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_rpc_tlsdiag.c
             LIBS dt_rpc PkgConfig::OPENSSL Threads::Threads TIMEOUT 120)
set_tests_properties(test_rpc_tlsdiag PROPERTIES FIXTURES_REQUIRED rpc_tls
                     ENVIRONMENT "GRPC_VERBOSITY=NONE")
