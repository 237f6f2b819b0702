# dt_agent: the node agent's probe (sysfs + libpci) into topo's model
# (verification and slice prediction live in dt_topo) and the report it
# sends; dratopo-agent: its command line, run included. Built once the
# modules it stands on exist in the tree.
if(TARGET dt_topo)
  add_library(dt_agent STATIC
    ${CMAKE_CURRENT_LIST_DIR}/sysfs_probe.c
    ${CMAKE_CURRENT_LIST_DIR}/pci_enum.c
    ${CMAKE_CURRENT_LIST_DIR}/probe.c
    ${CMAKE_CURRENT_LIST_DIR}/agent_report.c)
  target_include_directories(dt_agent PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(dt_agent PUBLIC dt_topo dt_proto dt_base PkgConfig::LIBPCI)

  # run (agent_run.c) talks gRPC and logs; probe/verify/slices do neither.
  add_executable(dratopo-agent ${CMAKE_CURRENT_LIST_DIR}/agent_main.c
                 ${CMAKE_CURRENT_LIST_DIR}/agent_run.c)
  target_compile_definitions(dratopo-agent PRIVATE DRATOPO_VERSION="${PROJECT_VERSION}")
  target_link_libraries(dratopo-agent PRIVATE dt_agent dt_rpc dt_obs dt_units)
  set_target_properties(dratopo-agent PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  install(TARGETS dratopo-agent RUNTIME DESTINATION bin)
endif()
