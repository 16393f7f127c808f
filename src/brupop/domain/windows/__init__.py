"""When updates may run: the original's 7-field cron schedule, the maintenance window, and
windows in a time zone. Imports the domain root only."""
