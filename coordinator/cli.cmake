# The dratopo command line. Each subcommand is coordinator/cli_<name>.c;
# the modules it needs are linked when they are part of the tree.
file(GLOB DT_CLI_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cli_*.c)
add_executable(dratopo ${CMAKE_CURRENT_LIST_DIR}/dratopo_main.c ${DT_CLI_SOURCES})
target_include_directories(dratopo PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(dratopo PRIVATE DRATOPO_VERSION="${PROJECT_VERSION}")
# The modules are linked at the end of the top-level CMakeLists, once every
# directory has defined its targets (dt_link_present).
set_target_properties(dratopo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
install(TARGETS dratopo RUNTIME DESTINATION bin)
