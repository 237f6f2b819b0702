# dt_hwdb: instance-type metadata and PCI ids, compiled from hwdb/*.yaml by
# hwdb_gen at build time, plus the lookup API and the ResourceSlices each
# type's drivers publish.
#
# hwdb_gen decodes the YAML with the same code --hwdb-extra uses
# (hwdb_source.c), so it needs dt_doc and dt_units; the library also needs
# dt_model. Until those modules exist in the tree, hwdb is left out.
if(TARGET dt_doc AND TARGET dt_units AND TARGET dt_model)
  set(DT_HWDB_DIR ${CMAKE_CURRENT_LIST_DIR})
  set(DT_HWDB_DATA ${CMAKE_CURRENT_BINARY_DIR}/hwdb_data.c)

  add_executable(hwdb_gen ${DT_HWDB_DIR}/hwdb_gen.c ${DT_HWDB_DIR}/hwdb_source.c)
  target_include_directories(hwdb_gen PRIVATE ${DT_HWDB_DIR})
  target_link_libraries(hwdb_gen PRIVATE dt_doc dt_units dt_base ${MATH_LIB})

  add_custom_command(
    OUTPUT ${DT_HWDB_DATA}
    COMMAND hwdb_gen ${DT_HWDB_DIR}/instance-types.yaml ${DT_HWDB_DIR}/pci-ids.yaml
            ${DT_HWDB_DATA}
    DEPENDS hwdb_gen ${DT_HWDB_DIR}/instance-types.yaml ${DT_HWDB_DIR}/pci-ids.yaml
    COMMENT "hwdb: compiling instance types and PCI ids into C tables"
    VERBATIM)

  add_library(dt_hwdb STATIC
    ${DT_HWDB_DIR}/hwdb.c
    ${DT_HWDB_DIR}/hwdb_source.c
    ${DT_HWDB_DIR}/hwdb_slices.c
    ${DT_HWDB_DIR}/hwdb_facts.c
    ${DT_HWDB_DIR}/hwdb_write.c
    ${DT_HWDB_DATA})
  target_include_directories(dt_hwdb PUBLIC ${DT_HWDB_DIR})
  target_link_libraries(dt_hwdb PUBLIC dt_model dt_doc dt_units dt_base Threads::Threads
                        ${MATH_LIB})
else()
  message(STATUS "dt_hwdb: left out until dt_doc, dt_units and dt_model are in the tree")
endif()
