# dt_plan: the planner behind `dratopo plan` (coordinator/plan*.c).
# Sources are listed one by one so that a file being written is never
# picked up by anyone's build before it compiles.
add_library(dt_plan STATIC
  ${CMAKE_CURRENT_LIST_DIR}/plan_nodepool.c
  ${CMAKE_CURRENT_LIST_DIR}/plan_fit.c
  ${CMAKE_CURRENT_LIST_DIR}/plan_pack.c
  ${CMAKE_CURRENT_LIST_DIR}/plan_pods.c
  ${CMAKE_CURRENT_LIST_DIR}/plan_output.c
  ${CMAKE_CURRENT_LIST_DIR}/plan.c)
target_include_directories(dt_plan PUBLIC
  ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/common ${PROJECT_SOURCE_DIR}/hwdb)
target_link_libraries(dt_plan PUBLIC ${MATH_LIB})
dt_link_present(dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base)
