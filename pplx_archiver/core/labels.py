"""The label table: every fixed string the rendered archive shows, in ``en`` and ``zh``.

``en`` is the default set. ``zh`` uses the original Chinese strings of the system the archive
format comes from (``## 后台任务（未归入轮次）``, ``⏸ 限额中断（内容截至中断点）`` …), so archives
rendered in either language can be compared with older exports. Labels with ``{placeholders}``
are filled with :meth:`str.format` by the caller (see :func:`label`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

DEFAULT_LANG = "en"

_EN: dict[str, str] = {
    "query": "Query",
    "answer": "Answer",
    "work_process": "Work process",
    "subagent": "Sub-agent",
    "subagent_work": "Sub-agent work",
    "background_unassigned": "Background tasks (unassigned to turns)",
    "limit_interrupted": "⏸ limit-interrupted (content stops at the interruption point)",
    "interrupted": "⏸ interrupted, pending continuation",
    "canceled": "⛔ canceled",
    "sources": "Sources",
    "citations": "Citations",
    "related": "Related questions",
    "turn": "Turn",
    "prompt": "Prompt",
    "steps": "Steps",
    "conclusion": "Conclusion",
    "council_member": "Council member",
    "round": "Round",
    "queries": "Queries",
    "unknown_item": "Unrecognised item type {type} (raw JSON kept in raw files)",
    "report": "Report",
    "no_answer": "(no answer was returned for this turn)",
    "thoughts": "Thoughts",
    "todo_list": "To-do list",
    "table": "Table",
    "empty_table": "(empty table: no columns, {rows} rows)",
    "user_questions": "Questions to the user",
    "user_response": "User response",
    "code": "Code",
    "output": "Output",
    "assets": "Assets",
    "model": "Model",
    "mode": "Mode",
    "created": "Created",
    "updated": "Updated",
    "space": "Space",
    "degraded": (
        "⚠ Partly unreadable: {path}: {reason}{more} "
        "(shown as far as it could be read; raw JSON kept in raw files)"
    ),
    "appendix_note": (
        "Background task results that could not be placed in a turn; shown in full, "
        "in the order the service returned them."
    ),
}

_ZH: dict[str, str] = {
    "query": "提问",
    "answer": "回答",
    "work_process": "工作过程",
    "subagent": "子代理",
    "subagent_work": "子代理工作",
    "background_unassigned": "后台任务（未归入轮次）",
    "limit_interrupted": "⏸ 限额中断（内容截至中断点）",
    "interrupted": "⏸ 中断待续",
    "canceled": "⛔ 已取消",
    "sources": "来源",
    "citations": "引用",
    "related": "相关问题",
    "turn": "轮次",
    "prompt": "提示",
    "steps": "步骤",
    "conclusion": "结论",
    "council_member": "评审模型",
    "round": "轮",
    "queries": "查询",
    "unknown_item": "无法识别的条目类型 {type}（原始 JSON 保存在原始文件中）",
    "report": "报告",
    "no_answer": "（本轮没有返回回答）",
    "thoughts": "思考",
    "todo_list": "待办清单",
    "table": "表格",
    "empty_table": "（空表格：没有列，{rows} 行）",
    "user_questions": "向用户提出的问题",
    "user_response": "用户回复",
    "code": "代码",
    "output": "输出",
    "assets": "文件",
    "model": "模型",
    "mode": "模式",
    "created": "创建时间",
    "updated": "更新时间",
    "space": "空间",
    "degraded": (
        "⚠ 部分无法读取：{path}：{reason}{more}（已尽可能显示；原始 JSON 保存在原始文件中）"
    ),
    "appendix_note": "无法归入任何轮次的后台任务结果；按服务返回的顺序完整列出。",
}

LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {"en": MappingProxyType(_EN), "zh": MappingProxyType(_ZH)}
)
"""``LABELS[lang][key]``: the label table (read-only)."""

LANGS = tuple(LABELS)


def label(key: str, lang: str = DEFAULT_LANG, **fields: object) -> str:
    """Return the label ``key`` in ``lang`` (unknown languages fall back to ``en``).

    Keyword ``fields`` fill ``{placeholders}`` (``label("unknown_item", "en", type="X")``).
    An unknown ``key`` raises :class:`KeyError`: every key the renderer uses is in the table.
    """
    table = LABELS.get(lang, LABELS[DEFAULT_LANG])
    text = table[key]
    return text.format(**fields) if fields else text
