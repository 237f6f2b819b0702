# dt_doc: YAML and JSON document trees (parse, build, compare, print).
add_library(dt_doc STATIC
  ${CMAKE_CURRENT_LIST_DIR}/doc.c
  ${CMAKE_CURRENT_LIST_DIR}/doc_scalar.c
  ${CMAKE_CURRENT_LIST_DIR}/doc_yaml.c
  ${CMAKE_CURRENT_LIST_DIR}/doc_json.c
  ${CMAKE_CURRENT_LIST_DIR}/doc_emit.c)
target_include_directories(dt_doc PUBLIC ${PROJECT_SOURCE_DIR}/common)
target_link_libraries(dt_doc PUBLIC dt_base PkgConfig::YAML PkgConfig::JSONC m)
