# Tool catalogs of widely used reference MCP servers that are not in
# ../shared/train. filesystem and memory: captured with tools/list from the
# npm packages @modelcontextprotocol/server-filesystem and server-memory
# 2026.8.31 (fs.jsonl, mem.jsonl). fetch, time, git (the Python reference
# servers), a Playwright-style browser server and a web-search server:
# written from their public READMEs (names and one-line descriptions).
REF = {
"fetch": [
 ("fetch", "Fetches a URL from the internet and optionally extracts its contents as markdown.", {"url": "URL to fetch", "max_length": "Maximum number of characters to return", "start_index": "Start the content at this character index", "raw": "Get the actual HTML content without simplification"}),
],
"time": [
 ("get_current_time", "Get current time in a specific timezone.", {"timezone": "IANA timezone name (e.g. 'America/New_York')"}),
 ("convert_time", "Convert time between timezones.", {"source_timezone": "Source IANA timezone name", "time": "Time to convert in 24-hour format (HH:MM)", "target_timezone": "Target IANA timezone name"}),
],
"git": [
 ("git_status", "Shows the working tree status.", {"repo_path": "Path to the Git repository"}),
 ("git_diff_unstaged", "Shows changes in the working directory that are not yet staged.", {"repo_path": "Path to the Git repository"}),
 ("git_diff_staged", "Shows changes that are staged for commit.", {"repo_path": "Path to the Git repository"}),
 ("git_diff", "Shows differences between branches or commits.", {"repo_path": "Path to the Git repository", "target": "Target branch or commit"}),
 ("git_commit", "Records changes to the repository.", {"repo_path": "Path to the Git repository", "message": "Commit message"}),
 ("git_add", "Adds file contents to the staging area.", {"repo_path": "Path to the Git repository", "files": "Files to stage"}),
 ("git_reset", "Unstages all staged changes.", {"repo_path": "Path to the Git repository"}),
 ("git_log", "Shows the commit logs.", {"repo_path": "Path to the Git repository", "max_count": "Maximum number of commits"}),
 ("git_create_branch", "Creates a new branch from an optional base branch.", {"repo_path": "Path to the Git repository", "branch_name": "Name of the new branch", "base_branch": "Base branch"}),
 ("git_checkout", "Switches branches.", {"repo_path": "Path to the Git repository", "branch_name": "Branch to switch to"}),
 ("git_show", "Shows the contents of a commit.", {"repo_path": "Path to the Git repository", "revision": "Commit hash or reference"}),
 ("git_branch", "List Git branches.", {"repo_path": "Path to the Git repository", "branch_type": "local, remote or all"}),
],
"browser": [
 ("browser_navigate", "Navigate to a URL.", {"url": "The URL to navigate to"}),
 ("browser_navigate_back", "Go back to the previous page.", {}),
 ("browser_snapshot", "Capture accessibility snapshot of the current page, this is better than screenshot.", {}),
 ("browser_click", "Perform click on a web page.", {"element": "Human-readable element description", "ref": "Exact target element reference from the page snapshot"}),
 ("browser_type", "Type text into editable element.", {"element": "Human-readable element description", "ref": "Element reference", "text": "Text to type", "submit": "Whether to submit entered text (press Enter after)"}),
 ("browser_take_screenshot", "Take a screenshot of the current page. You can't perform actions based on the screenshot, use browser_snapshot for actions.", {"filename": "File name to save the screenshot to", "fullPage": "When true, takes a screenshot of the full scrollable page"}),
 ("browser_press_key", "Press a key on the keyboard.", {"key": "Name of the key to press or a character to generate, such as ArrowLeft or a"}),
 ("browser_select_option", "Select an option in a dropdown.", {"element": "Human-readable element description", "values": "Array of values to select"}),
 ("browser_wait_for", "Wait for text to appear or disappear or a specified time to pass.", {"text": "The text to wait for", "time": "The time to wait in seconds"}),
 ("browser_tabs", "List, create, close, or select a browser tab.", {"action": "Operation to perform", "index": "Tab index"}),
 ("browser_close", "Close the page.", {}),
 ("browser_file_upload", "Upload one or multiple files.", {"paths": "The absolute paths to the files to upload"}),
 ("browser_fill_form", "Fill multiple form fields.", {"fields": "Fields to fill in"}),
 ("browser_evaluate", "Evaluate JavaScript expression on page or element.", {"function": "() => { /* code */ }"}),
 ("browser_console_messages", "Returns all console messages.", {}),
 ("browser_network_requests", "Returns all network requests since loading the page.", {}),
 ("browser_hover", "Hover over element on page.", {"element": "Human-readable element description", "ref": "Element reference"}),
 ("browser_resize", "Resize the browser window.", {"width": "Width of the browser window", "height": "Height of the browser window"}),
 ("browser_pdf_save", "Save page as PDF.", {"filename": "File name to save the pdf to"}),
],
"websearch": [
 ("web_search", "Performs a web search using a search engine API, ideal for general queries, news, articles, and online content.", {"query": "Search query", "count": "Number of results"}),
 ("local_search", "Searches for local businesses and places, with addresses, ratings and opening hours.", {"query": "Local search query (e.g. 'pizza near Central Park')", "count": "Number of results"}),
],
}
