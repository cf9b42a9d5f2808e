// i18n.js — the page's words in Chinese (the default) and English; the
// choice is kept in localStorage. t(key, {name}) fills {name} slots.
const dict = {
  zh: {
    'app.title': 'zcor 记忆', 'lang.switch': '切换语言 / Switch language',
    'tab.memory': '记忆', 'tab.history': '历史', 'tab.people': '人物', 'tab.synonyms': '同义词',
    'tab.config': '配置', 'tab.conversations': '对话',
    'state.loading': '加载中…', 'state.error': '出错了', 'state.empty': '（空）', 'state.noMatch': '没有结果',
    'state.missingRoute': '此版本的服务器还没有这个接口。',
    'action.add': '添加', 'action.cancel': '取消', 'action.confirmDelete': '确认删除', 'action.delete': '删除',
    'action.edit': '编辑', 'action.find': '查找', 'action.remove': '移除', 'action.save': '保存', 'action.search': '搜索',
    'page.prev': '上一页', 'page.next': '下一页', 'page.of': '第 {from}–{to} 条，共 {total} 条',
    'pick.label': '查找记忆', 'pick.placeholder': '关键词', 'pick.root': '设为根节点', 'pick.rootValue': '（根节点）',
    'mem.search': '查找记忆', 'mem.keywords': '关键词', 'mem.keywordsHint': '空格或逗号分隔', 'mem.from': '从', 'mem.to': '到',
    'mem.includeSuperseded': '包括已被取代的', 'mem.new': '新建记忆', 'mem.results': '搜索结果', 'mem.tree': '记忆树',
    'mem.detail': '记忆详情', 'mem.pick': '选择一条记忆查看详情。', 'mem.important': '重要', 'mem.superseded': '已被取代',
    'mem.expand': '展开 {title}', 'mem.noChildren': '没有子节点', 'mem.path': '路径', 'mem.created': '创建于',
    'mem.updated': '更新于', 'mem.scope': '范围', 'mem.supersededBy': '已被取代，替代记录：', 'mem.content': '内容',
    'mem.source': '原始消息', 'mem.noSource': '没有原始消息', 'mem.children': '子节点', 'mem.mark': '标记重要',
    'mem.unmark': '取消重要', 'mem.merge': '合并', 'mem.supersede': '标记为被取代', 'mem.receipt': '重要记忆已满，被替换的是：',
    'mem.deleted': '已删除“{title}”', 'mem.deleteRefused': '删除被拒绝：', 'mem.confirmDelete': '确定删除“{title}”吗？历史会保留删除前的内容。',
    'mem.saved': '已保存', 'mem.createdOk': '已新建 {id}', 'mem.editTitle': '编辑 {id}', 'mem.title': '标题',
    'mem.keywordsList': '检索词（逗号分隔）', 'mem.parent': '父节点', 'mem.parentFind': '查找父节点',
    'mem.merged': '已合并为 {id}', 'mem.mergeHelp': '把下列记忆合并为一条新记录；原记录保留并标记为被新记录取代。',
    'mem.mergeAdd': '添加要合并的记忆', 'mem.reason': '原因', 'mem.supersededOk': '已标记为被取代',
    'mem.supersedeHelp': '选择取代这条记忆的记录；这条记忆保留，但不再参与召回和默认查询。', 'mem.replacement': '替代记录',
    'mem.replacementFind': '查找替代记录',
    'hist.status': '状态', 'hist.actor': '操作者', 'hist.conversation': '对话', 'hist.host': '（宿主）',
    'hist.arguments': '参数', 'hist.added': '新增', 'hist.removed': '删除', 'hist.changed': '修改', 'hist.field': '字段',
    'hist.before': '修改前', 'hist.after': '修改后',
    'ppl.new': '新建人物', 'ppl.editor': '人物详情', 'ppl.pick': '选择一个人物，或新建。', 'ppl.affinity': '好感度',
    'ppl.id': '人物 ID', 'ppl.name': '姓名', 'ppl.aliases': '别名（逗号分隔）', 'ppl.relationship': '关系', 'ppl.reason': '判断原因',
    'ppl.node': '关联记忆节点：', 'ppl.noNode': '无', 'ppl.unlink': '取消关联', 'ppl.linkFind': '查找要关联的记忆',
    'ppl.saved': '已保存 {name}', 'ppl.deleted': '已删除 {name}', 'ppl.confirmDelete': '确定删除 {name} 吗？',
    'syn.filter': '筛选词组', 'syn.terms': '词条', 'syn.termsHint': '词条，逗号分隔', 'syn.add': '新词组', 'syn.added': '已添加词组',
    'syn.preview': '扩展预览', 'syn.word': '输入一个词', 'syn.normalized': '归一化', 'syn.noExpansion': '没有同义词扩展',
    'syn.editN': '编辑第 {n} 组', 'syn.deleteN': '删除第 {n} 组', 'syn.confirmDelete': '确定删除词组 {terms} 吗？',
    'cfg.recallChars': '自动回忆字符预算', 'cfg.recallCharsHelp': '0 关闭自动回忆。',
    'cfg.relationships': '人物关系记忆', 'cfg.relationshipsHelp': '关闭后模型不再收到关系工具和维护指引；本页仍可管理人物。',
    'cfg.profile': '回忆方案', 'cfg.profile.zcor': 'zcor（种子规则）', 'cfg.profile.scored': 'scored（打分）',
    'cfg.saved': '配置已保存', 'cfg.others': '其他设置（只读）',
    'cfg.qq': '对话与记忆文件', 'cfg.botId': '机器人自己的 QQ 号（它的消息不记录）',
    'cfg.privateChats': '记录私聊', 'cfg.groups': '群白名单（逗号分隔，留空为全部）',
    'cfg.privates': '私聊白名单（逗号分隔，留空为全部）', 'cfg.mediaCacheMax': '图片缓存上限（张）',
    'cfg.memoryFileMaxBytes': 'MEMORY.md 上限（字节）', 'cfg.memoryArchiveRatio': '滚入冷层的比例（0.1–1）',
    'cfg.viewMaxBytes': '其他记忆文件上限（字节）', 'cfg.mirror': '在 mirror/ 下保留记忆文件的副本',
    'conv.detail': '对话详情', 'conv.pick': '选择一个对话。', 'conv.none': '还没有对话', 'conv.key': '对话',
    'conv.messages': '消息数', 'conv.sinceDigest': '未整理行数', 'conv.lastMessage': '最后消息', 'conv.lastDigest': '最后整理',
    'conv.transcript': '聊天记录', 'conv.date': '日期', 'conv.views': '视图（只读）', 'conv.noViews': '没有视图', 'conv.media': '附件', 'conv.allViews': '所有视图（只读）',
  },
  en: {
    'app.title': 'zcor Memory', 'lang.switch': 'Switch language / 切换语言',
    'tab.memory': 'Memory', 'tab.history': 'History', 'tab.people': 'People', 'tab.synonyms': 'Synonyms',
    'tab.config': 'Config', 'tab.conversations': 'Conversations',
    'state.loading': 'Loading…', 'state.error': 'Error', 'state.empty': '(empty)', 'state.noMatch': 'Nothing found',
    'state.missingRoute': 'This server version does not have this route yet.',
    'action.add': 'Add', 'action.cancel': 'Cancel', 'action.confirmDelete': 'Yes, delete', 'action.delete': 'Delete',
    'action.edit': 'Edit', 'action.find': 'Find', 'action.remove': 'Remove', 'action.save': 'Save', 'action.search': 'Search',
    'page.prev': 'Previous', 'page.next': 'Next', 'page.of': '{from}–{to} of {total}',
    'pick.label': 'Find a memory', 'pick.placeholder': 'keywords', 'pick.root': 'Make it a root', 'pick.rootValue': '(root)',
    'mem.search': 'Find memories', 'mem.keywords': 'Keywords', 'mem.keywordsHint': 'space or comma separated', 'mem.from': 'From', 'mem.to': 'To',
    'mem.includeSuperseded': 'include superseded', 'mem.new': 'New memory', 'mem.results': 'Results', 'mem.tree': 'Memory tree',
    'mem.detail': 'Memory detail', 'mem.pick': 'Choose a memory to see it.', 'mem.important': 'important', 'mem.superseded': 'superseded',
    'mem.expand': 'Expand {title}', 'mem.noChildren': 'No children', 'mem.path': 'Path', 'mem.created': 'Created',
    'mem.updated': 'updated', 'mem.scope': 'scope', 'mem.supersededBy': 'Superseded by', 'mem.content': 'Content',
    'mem.source': 'Source message', 'mem.noSource': 'No source message', 'mem.children': 'Children', 'mem.mark': 'Mark important',
    'mem.unmark': 'Unmark important', 'mem.merge': 'Merge', 'mem.supersede': 'Supersede', 'mem.receipt': 'Important list was full; this one was unmarked:',
    'mem.deleted': 'Deleted “{title}”', 'mem.deleteRefused': 'Delete refused:', 'mem.confirmDelete': 'Delete “{title}”? History keeps its content.',
    'mem.saved': 'Saved', 'mem.createdOk': 'Created {id}', 'mem.editTitle': 'Edit {id}', 'mem.title': 'Title',
    'mem.keywordsList': 'Search terms (comma separated)', 'mem.parent': 'Parent', 'mem.parentFind': 'Find a parent',
    'mem.merged': 'Merged into {id}', 'mem.mergeHelp': 'Merge these memories into one new record; the sources stay, superseded by it.',
    'mem.mergeAdd': 'Add a memory to merge', 'mem.reason': 'Reason', 'mem.supersededOk': 'Marked as superseded',
    'mem.supersedeHelp': 'Choose the record that replaces this one; this one stays readable but leaves recall and default queries.', 'mem.replacement': 'Replacement',
    'mem.replacementFind': 'Find the replacement',
    'hist.status': 'status', 'hist.actor': 'actor', 'hist.conversation': 'conversation', 'hist.host': '(host)',
    'hist.arguments': 'Arguments', 'hist.added': 'Added', 'hist.removed': 'Removed', 'hist.changed': 'Changed', 'hist.field': 'Field',
    'hist.before': 'Before', 'hist.after': 'After',
    'ppl.new': 'New person', 'ppl.editor': 'Person', 'ppl.pick': 'Choose a person, or create one.', 'ppl.affinity': 'Affinity',
    'ppl.id': 'Person id', 'ppl.name': 'Name', 'ppl.aliases': 'Aliases (comma separated)', 'ppl.relationship': 'Relationship', 'ppl.reason': 'Reason',
    'ppl.node': 'Linked memory node:', 'ppl.noNode': 'none', 'ppl.unlink': 'Unlink', 'ppl.linkFind': 'Find a memory to link',
    'ppl.saved': 'Saved {name}', 'ppl.deleted': 'Deleted {name}', 'ppl.confirmDelete': 'Delete {name}?',
    'syn.filter': 'Filter groups', 'syn.terms': 'Terms', 'syn.termsHint': 'terms, comma separated', 'syn.add': 'New group', 'syn.added': 'Group added',
    'syn.preview': 'Expansion preview', 'syn.word': 'Type a word', 'syn.normalized': 'normalized', 'syn.noExpansion': 'No synonyms',
    'syn.editN': 'Edit group {n}', 'syn.deleteN': 'Delete group {n}', 'syn.confirmDelete': 'Delete the group {terms}?',
    'cfg.recallChars': 'Auto-recall character budget', 'cfg.recallCharsHelp': '0 turns auto-recall off.',
    'cfg.relationships': 'Relationship memory', 'cfg.relationshipsHelp': 'Off: the model gets neither the relationship tools nor their guidance; this page still manages people.',
    'cfg.profile': 'Recall profile', 'cfg.profile.zcor': 'zcor (seed rules)', 'cfg.profile.scored': 'scored',
    'cfg.saved': 'Settings saved', 'cfg.others': 'Other settings (read-only)',
    'cfg.qq': 'Conversations and memory files', 'cfg.botId': "The bot's own QQ number (its messages are not logged)",
    'cfg.privateChats': 'Log private chats', 'cfg.groups': 'Group allow-list (comma-separated, empty: all)',
    'cfg.privates': 'Private chat allow-list (comma-separated, empty: all)', 'cfg.mediaCacheMax': 'Image cache size (files)',
    'cfg.memoryFileMaxBytes': 'MEMORY.md limit (bytes)', 'cfg.memoryArchiveRatio': 'Rollover threshold (0.1–1)',
    'cfg.viewMaxBytes': 'Other memory files limit (bytes)', 'cfg.mirror': 'Keep copies of the memory files in mirror/',
    'conv.detail': 'Conversation', 'conv.pick': 'Choose a conversation.', 'conv.none': 'No conversations yet', 'conv.key': 'Conversation',
    'conv.messages': 'Messages', 'conv.sinceDigest': 'Since digest', 'conv.lastMessage': 'Last message', 'conv.lastDigest': 'Last digest',
    'conv.transcript': 'Transcript', 'conv.date': 'Date', 'conv.views': 'Views (read-only)', 'conv.noViews': 'No views', 'conv.media': 'Media', 'conv.allViews': 'All views (read-only)',
  },
};

let lang = (() => {
  try { return localStorage.getItem('zcor.lang') === 'en' ? 'en' : 'zh'; } catch { return 'zh'; }
})();

export const getLang = () => lang;
export function setLang(l) {
  lang = l === 'en' ? 'en' : 'zh';
  try { localStorage.setItem('zcor.lang', lang); } catch { /* private mode: this visit only */ }
}

export function t(key, vars = {}) {
  const s = dict[lang][key] ?? dict.zh[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (_, k) => (vars[k] ?? ''));
}

// Static text in index.html marked data-i18n="key".
export function applyStatic(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
}
