# dt_agent: the node agent's probe (sysfs + libpci), topology, verification
# against hwdb and slice prediction; dratopo-agent: its command line.
# Built once the modules it stands on exist in the tree.
if(TARGET dt_hwdb AND TARGET dt_model AND TARGET dt_doc)
  add_library(dt_agent STATIC
    ${CMAKE_CURRENT_LIST_DIR}/sysfs_probe.c
    ${CMAKE_CURRENT_LIST_DIR}/pci_enum.c
    ${CMAKE_CURRENT_LIST_DIR}/topology.c
    ${CMAKE_CURRENT_LIST_DIR}/topology_emit.c
    ${CMAKE_CURRENT_LIST_DIR}/verify.c
    ${CMAKE_CURRENT_LIST_DIR}/agent_slices.c)
  target_include_directories(dt_agent PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(dt_agent PUBLIC dt_hwdb dt_model dt_doc dt_base PkgConfig::LIBPCI)

  add_executable(dratopo-agent ${CMAKE_CURRENT_LIST_DIR}/agent_main.c)
  target_link_libraries(dratopo-agent PRIVATE dt_agent)
  set_target_properties(dratopo-agent PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  install(TARGETS dratopo-agent RUNTIME DESTINATION bin)
endif()
