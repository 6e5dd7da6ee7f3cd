"""OS timers that run a sync: install, show and remove systemd user units or a crontab entry."""
