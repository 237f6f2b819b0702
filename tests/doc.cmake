# Suite of the document module (YAML/JSON trees); links json-c to check
# that what doc_emit_json() prints is JSON to another reader too.
dt_add_suite(test_doc SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_doc.c
             LIBS dt_doc PkgConfig::JSONC)
