# Suites of the model module: decoding and defaults, validation rules and
# messages, round trips through the encoder, and the CLI's validate.
dt_add_suite(test_model_validate
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_model_validate.c
  LIBS dt_model INTERNAL common/model)
dt_add_suite(test_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_model.c LIBS dt_model)
dt_add_suite(test_model_roundtrip
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_model_roundtrip.c LIBS dt_model)
dt_add_script_test(e2e_validate ${CMAKE_CURRENT_LIST_DIR}/e2e/validate.sh)
dt_add_script_test(e2e_corpus ${CMAKE_CURRENT_LIST_DIR}/e2e/corpus.sh)
# The corpus against the test control plane's kube-apiserver (tests/kube.cmake):
# its verdict on every file it can serve is the one SOURCES.tsv records.
if(DRATOPO_KUBE_TESTS)
  add_test(NAME corpus_apiserver
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/corpus_apiserver.sh ${PROJECT_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(corpus_apiserver PROPERTIES FIXTURES_REQUIRED kube RESOURCE_LOCK kube
    TIMEOUT 600 ENVIRONMENT "DT_KUBE_DIR=${PROJECT_BINARY_DIR}/kube-cluster")
endif()
