# dt_units: Kubernetes quantities (resource.Quantity) and semantic versions
# (the CEL semver library), shared by the model, CEL and the allocator.
add_library(dt_units STATIC
  ${CMAKE_CURRENT_LIST_DIR}/quantity.c
  ${CMAKE_CURRENT_LIST_DIR}/semver.c)
target_include_directories(dt_units PUBLIC ${PROJECT_SOURCE_DIR}/common)
target_link_libraries(dt_units PUBLIC dt_base m)
