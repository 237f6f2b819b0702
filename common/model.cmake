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

