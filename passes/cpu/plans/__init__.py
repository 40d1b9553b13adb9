"""What xla-apply-schedules plans with: which transform schedule of
``passes/cpu/schedules/`` each linalg op gets, and its tile sizes (``*_plan``);
the loop facts the plans read (``body_reads``, ``loop_trips``); the functions
planned ops live in while the schedules apply (``schedule_functions``)."""
