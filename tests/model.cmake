# Suites of the model module: decoding and defaults, validation rules and
# messages, round trips through the encoder, and the CLI's validate.
if(TARGET dt_model AND TARGET dt_doc AND TARGET dt_units)
  dt_add_suite(test_model_validate
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_model_validate.c
    LIBS dt_model)
  dt_add_suite(test_model
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_model.c
    LIBS dt_model)
  # The round trip prints through doc_emit_*; register it once the doc
  # module has its printers.
  file(GLOB _dt_doc_sources ${PROJECT_SOURCE_DIR}/common/doc*.c)
  set(_dt_have_emit OFF)
  foreach(_f ${_dt_doc_sources})
    file(STRINGS ${_f} _hit REGEX "^int doc_emit_yaml\\(")
    if(_hit)
      set(_dt_have_emit ON)
    endif()
  endforeach()
  if(_dt_have_emit)
    dt_add_suite(test_model_roundtrip
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_model_roundtrip.c
      LIBS dt_model)
  endif()
  dt_add_script_test(e2e_validate ${CMAKE_CURRENT_LIST_DIR}/e2e/validate.sh)
endif()
