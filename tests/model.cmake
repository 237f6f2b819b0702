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
