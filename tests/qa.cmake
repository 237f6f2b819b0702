# The QA pass's end-to-end regression script (tests/e2e/qa.sh): user-style
# cases across validate, hwdb, allocate, plan and the agent.
dt_add_script_test(e2e_qa ${CMAKE_CURRENT_LIST_DIR}/e2e/qa.sh)
