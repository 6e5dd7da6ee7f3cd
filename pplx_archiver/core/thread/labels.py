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
    "stub_query": "(sub-agent results: no query of its own)",
    "no_query": "(no query)",
    "step_unfinished": "unfinished",
    "step_failed": "failed",
    "by_turn": "Citations by turn",
    "by_turn_note": (
        "A turn's [n] is the n-th source of its own citation list (in conversation.md and "
        "its turn file); [n] → k: the list above numbers it k."
    ),
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
    "stub_query": "（子代理结果：本轮没有提问）",
    "no_query": "（没有提问）",
    "step_unfinished": "未完成",
    "step_failed": "失败",
    "by_turn": "各轮引用",
    "by_turn_note": (
        "每轮回答中的 [n] 指该轮自己引用列表（conversation.md 与该轮文件）中的第 n 个来源；"
        "[n] → k：即上方列表中的第 k 个。"
    ),
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

# Plain ``text`` step types shown as labels (an unknown type is shown as it is).
_STEPS_EN = {
    "INITIAL_QUERY": "Initial query",
    "SEARCH_WEB": "Web search",
    "SEARCH_RESULTS": "Search results",
    "GET_URL_CONTENT": "Reading pages",
    "CODE": "Code",
    "RESEARCH_ANSWER": "Research answer",
    "RESEARCH_CLARIFYING_QUESTIONS": "Clarifying questions",
    "COUNCIL_RESEARCH": "Council research",
    "ASI_TOOL_INPUT": "Tool input",
    "ASI_TOOL_OUTPUT": "Tool output",
    "LOAD_SKILL": "Loading a skill",
    "LOAD_SKILL_RESPONSE": "Skill loaded",
    "ATTACHMENT": "Attachment",
    "URL_NAVIGATE": "Opening pages",
    "CREATE_CHART": "Chart",
    "GENERATE_IMAGE_RESULTS": "Generated images",
    "DOCX": "Document",
    "READ": "Reading",
    "PROMPT_INPUT": "Question to the user",
}
_STEPS_ZH = {
    "INITIAL_QUERY": "初始提问",
    "SEARCH_WEB": "网页搜索",
    "SEARCH_RESULTS": "搜索结果",
    "GET_URL_CONTENT": "读取网页",
    "CODE": "代码",
    "RESEARCH_ANSWER": "研究结论",
    "RESEARCH_CLARIFYING_QUESTIONS": "澄清问题",
    "COUNCIL_RESEARCH": "评审研究",
    "ASI_TOOL_INPUT": "工具输入",
    "ASI_TOOL_OUTPUT": "工具输出",
    "LOAD_SKILL": "加载技能",
    "LOAD_SKILL_RESPONSE": "技能已加载",
    "ATTACHMENT": "附件",
    "URL_NAVIGATE": "打开网页",
    "CREATE_CHART": "图表",
    "GENERATE_IMAGE_RESULTS": "生成的图片",
    "DOCX": "文档",
    "READ": "读取",
    "PROMPT_INPUT": "向用户提问",
}
STEP_LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {"en": MappingProxyType(_STEPS_EN), "zh": MappingProxyType(_STEPS_ZH)}
)
"""``STEP_LABELS[lang][step_type]``: how a known plain step type is shown."""


def step_label(step_type: str, lang: str = DEFAULT_LANG) -> str:
    """The label of a plain step type ('' when the type is not a known one)."""
    return STEP_LABELS.get(lang, STEP_LABELS[DEFAULT_LANG]).get(step_type, "")


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
