# dt_base: errors, diagnostics lists and string buffers, used by every module.
add_library(dt_base STATIC
  ${CMAKE_CURRENT_LIST_DIR}/err.c
  ${CMAKE_CURRENT_LIST_DIR}/diag.c
  ${CMAKE_CURRENT_LIST_DIR}/strbuf.c)
target_include_directories(dt_base PUBLIC ${PROJECT_SOURCE_DIR}/common)
