# dt_alloc: the structured allocator (common/alloc*.c). It needs the model,
# CEL and units libraries, whose fragments sort after this one; the library
# is defined once the whole directory has been read, and only when they
# are all part of the tree, so that a partial tree still builds (then
# `dratopo allocate` reports that it is not part of the build).
file(GLOB DT_ALLOC_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/alloc*.c)

function(dt_alloc_define)
  foreach(dep dt_model dt_cel dt_units dt_base)
    if(NOT TARGET ${dep})
      message(STATUS "dt_alloc: ${dep} is not part of this tree; the allocator is left out")
      return()
    endif()
  endforeach()
  add_library(dt_alloc STATIC ${DT_ALLOC_SOURCES})
  target_include_directories(dt_alloc PUBLIC ${PROJECT_SOURCE_DIR}/common)
  target_link_libraries(dt_alloc PUBLIC dt_model dt_cel dt_units dt_base)
endfunction()
cmake_language(DEFER CALL dt_alloc_define)

# cli_allocate.c is compiled into dratopo whatever the tree holds; it
# carries the command only when dt_alloc exists (checked once every
# directory has defined its targets).
function(dt_alloc_cli)
  if(TARGET dt_alloc AND TARGET dratopo)
    set_property(SOURCE ${PROJECT_SOURCE_DIR}/coordinator/cli_allocate.c
                 DIRECTORY ${PROJECT_SOURCE_DIR}/coordinator
                 APPEND PROPERTY COMPILE_DEFINITIONS DT_HAVE_ALLOC=1)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL dt_alloc_cli)
