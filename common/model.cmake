# dt_model: the typed DRA, core, workload and Karpenter objects: loading
# (decode + defaults), the API server's validation, and writing them out.
file(GLOB DT_MODEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/model*.c)
add_library(dt_model STATIC ${DT_MODEL_SOURCES})
target_include_directories(dt_model PUBLIC ${PROJECT_SOURCE_DIR}/common)
target_link_libraries(dt_model PUBLIC dt_base)

# dt_doc and dt_units are defined by fragments that sort after this one;
# link them once the whole directory has been read.
function(dt_model_link_deps)
  foreach(lib dt_doc dt_units)
    if(TARGET ${lib})
      target_link_libraries(dt_model PUBLIC ${lib})
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL dt_model_link_deps)

# `dratopo validate` calls cel_compile_selector through a weak reference so
# that it builds without dt_cel; a weak reference alone does not pull the
# object out of the static library, so ask the linker for it by name.
function(dt_model_cli_wants_cel)
  if(TARGET dratopo AND TARGET dt_cel)
    target_link_options(dratopo PRIVATE "LINKER:-u,cel_compile_selector")
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL dt_model_cli_wants_cel)
