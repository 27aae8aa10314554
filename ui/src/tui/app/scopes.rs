//! The scope tree the scopes pane lists.

use tether_tools::AgentPipelineScope;

/// One entry of the scope tree.
#[derive(Clone, Debug)]
pub struct ScopeEntry {
    pub scope: Option<AgentPipelineScope>,
    pub label: String,
    pub depth: usize,
}

impl ScopeEntry {
    pub fn global() -> Self {
        Self {
            scope: None,
            label: "global".to_owned(),
            depth: 0,
        }
    }

    /// Entries for scopes, parents before children, each under its parent.
    pub fn tree(scopes: &[AgentPipelineScope]) -> Vec<ScopeEntry> {
        let mut entries = vec![Self::global()];
        let mut roots: Vec<&AgentPipelineScope> = scopes.iter().filter(|s| s.parent().is_none()).collect();
        roots.sort_by_key(|s| s.id());
        fn walk(scope: &AgentPipelineScope, all: &[AgentPipelineScope], depth: usize, out: &mut Vec<ScopeEntry>) {
            out.push(ScopeEntry {
                scope: Some(scope.clone()),
                label: scope
                    .label()
                    .map_or_else(|| format!("scope {}", scope.id()), str::to_owned),
                depth,
            });
            let mut children: Vec<&AgentPipelineScope> = all.iter().filter(|c| c.parent() == Some(scope)).collect();
            children.sort_by_key(|c| c.id());
            for child in children {
                walk(child, all, depth + 1, out);
            }
        }
        for root in roots {
            walk(root, scopes, 1, &mut entries);
        }
        entries
    }
}
