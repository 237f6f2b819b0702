# dt_agent: the node agent's probe (sysfs + libpci) into topo's model
# (verification and slice prediction live in dt_topo); dratopo-agent: its
# command line. Built once the modules it stands on exist in the tree.
if(TARGET dt_topo)
  add_library(dt_agent STATIC
    ${CMAKE_CURRENT_LIST_DIR}/sysfs_probe.c
    ${CMAKE_CURRENT_LIST_DIR}/pci_enum.c
    ${CMAKE_CURRENT_LIST_DIR}/probe.c)
  target_include_directories(dt_agent PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(dt_agent PUBLIC dt_topo dt_base PkgConfig::LIBPCI)

  add_executable(dratopo-agent ${CMAKE_CURRENT_LIST_DIR}/agent_main.c)
  target_link_libraries(dratopo-agent PRIVATE dt_agent)
  set_target_properties(dratopo-agent PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  install(TARGETS dratopo-agent RUNTIME DESTINATION bin)
endif()
