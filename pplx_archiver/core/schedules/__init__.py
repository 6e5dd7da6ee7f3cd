"""Schedules: the text of the OS timer (systemd units or a crontab line) that runs a sync."""

from __future__ import annotations

from pplx_archiver.core.schedules.schedule import (
    ScheduleSpec,
    archive_of_cron_line,
    archive_of_unit,
    check_spec,
    cron_line,
    crontab_with,
    crontab_without,
    default_cron_time,
    find_cron_line,
    mask_secrets,
    mask_url,
    service_text,
    timer_text,
    unit_names,
)

__all__ = [
    "ScheduleSpec",
    "archive_of_cron_line",
    "archive_of_unit",
    "check_spec",
    "cron_line",
    "crontab_with",
    "crontab_without",
    "default_cron_time",
    "find_cron_line",
    "mask_secrets",
    "mask_url",
    "service_text",
    "timer_text",
    "unit_names",
]
