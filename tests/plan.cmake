# Suites of the planner. test_plan_pack tests the packing search on shapes
# it builds itself; test_plan plans real manifests, through plan_execute
# (the entry point) and its steps (plan_run, the writers).
dt_add_suite(test_plan_pack
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan_pack.c
  LIBS dt_plan dt_hwdb dt_units dt_base INTERNAL plan)
dt_add_suite(test_plan
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan.c
  LIBS dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base
  INTERNAL plan)
dt_add_script_test(plan_e2e ${CMAKE_CURRENT_LIST_DIR}/e2e/plan.sh)
dt_add_script_test(e2e_extres ${CMAKE_CURRENT_LIST_DIR}/e2e/extres.sh)
dt_add_suite(test_plan_extres
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan_extres.c
  LIBS dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base
  INTERNAL plan)
dt_add_suite(test_plan_overlay
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan_overlay.c
  LIBS dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base
  INTERNAL plan)
