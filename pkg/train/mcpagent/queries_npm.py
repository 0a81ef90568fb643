# Training queries for the npm MCP servers captured in servers/ (see
# servers/README.md): capability queries as agents and users phrase them
# when they call find_tools (one capability each, concrete arguments,
# words the tool text does not use, implied steps), and multi-tool tasks
# with every tool they need, prerequisites included. Written by hand on
# 2026-12-01 from the task side, each label checked against the tool's
# description and input schema, before any ranking was looked at (no
# retrieval or evaluation was run). Never for ../shared/bench catalogs or
# the real-MCP DEV servers. Where two servers offer the same capability
# (GitHub/GitLab, Playwright/Chrome DevTools, the web-search servers,
# notion/notion-remote) the query names the product or a feature only the
# labelled tool has.
# {server: {tool: [queries]}}; TASKS: (query, [(server, tool)]).
Q = {}

Q["github"] = {
 "create_or_update_file": ["update the README in my GitHub repo with this text", "commit a new CHANGELOG.md file to the main branch on GitHub", "overwrite docs/setup.md in octo/app on GitHub", "add a LICENSE file to the GitHub repository", "edit a single file directly on GitHub without cloning", "change the version in package.json on the GitHub repo"],
 "search_repositories": ["find GitHub repos about rust web frameworks", "search GitHub for a golang MCP server", "which repositories on GitHub match 'terraform aws eks'", "look for popular open source projects for PDF parsing on GitHub", "is there a GitHub repo for this library"],
 "create_repository": ["create a new GitHub repo called weekend-project", "make a private repository on GitHub", "start a fresh GitHub repository with a README", "new repo on my GitHub account for the blog"],
 "get_file_contents": ["show me src/main.go from the GitHub repo", "read the README of facebook/react on GitHub", "what's in the docs folder of that GitHub project", "open the Dockerfile in the repository on the dev branch", "fetch the contents of package.json from GitHub", "list the files at the root of the GitHub repo"],
 "push_files": ["push these three files to GitHub in one commit", "upload several files to the repo in a single commit", "commit the generated site files to the gh-pages branch", "push a batch of changes to GitHub at once"],
 "create_issue": ["open a GitHub issue for the login bug", "file a bug report in octo/app on GitHub", "create an issue titled 'crash on startup' with the label bug", "report this problem in the project's GitHub issues", "add a feature request issue to the repo"],
 "create_pull_request": ["open a pull request from feature/login into main", "create a PR for my branch on GitHub", "submit the changes for review as a GitHub pull request", "make a draft PR with this description", "raise a PR against the develop branch"],
 "fork_repository": ["fork this GitHub repo to my account", "make my own copy of torvalds/linux on GitHub", "fork the project into our organization"],
 "create_branch": ["create a branch named fix/typo on GitHub", "make a new branch off main in the GitHub repo", "branch from develop for the release on GitHub"],
 "list_commits": ["show the latest commits on main in the GitHub repo", "who committed to the repo this week on GitHub", "list recent commits of the release branch", "what were the last 10 commits on GitHub"],
 "list_issues": ["list open issues in octo/app", "show GitHub issues labelled bug", "what issues are still open in the repository", "closed issues from last month on GitHub", "which issues are assigned in the repo"],
 "update_issue": ["close GitHub issue #42", "change the title of issue 17", "add the label needs-triage to the issue", "assign issue 8 to alice on GitHub", "reopen the GitHub issue"],
 "add_issue_comment": ["comment on issue #42 saying it is fixed", "reply on the GitHub issue with the workaround", "leave a comment on the pull request thread", "post an update on the bug report on GitHub"],
 "search_code": ["search GitHub code for uses of deprecatedFunction", "find where MAX_RETRIES is defined across GitHub", "code search for 'import boto3' in our org on GitHub", "which GitHub repos call this API in their code"],
 "search_issues": ["search GitHub for issues mentioning 'segfault' in any repo", "find pull requests across GitHub that mention CVE-2024-1234", "has anyone reported this error in GitHub issues", "search all my open PRs across repositories"],
 "search_users": ["find the GitHub user named torvalds", "search GitHub users located in Berlin", "look up a developer's GitHub account"],
 "get_issue": ["show GitHub issue #1234", "get the details of issue 77 in octo/app", "what does issue 12 say", "read the description of that GitHub issue"],
 "get_pull_request": ["show pull request #56", "get the details of PR 3 on GitHub", "who opened this pull request and is it mergeable", "what's the status of PR 89"],
 "list_pull_requests": ["list open pull requests in the repo", "which PRs are waiting on GitHub", "show merged pull requests into main", "pull requests opened against develop"],
 "create_pull_request_review": ["approve pull request 56", "request changes on the PR with a comment", "leave a review on the GitHub pull request", "review the PR and approve it"],
 "merge_pull_request": ["merge PR #56", "squash and merge the pull request", "merge the approved pull request into main on GitHub"],
 "get_pull_request_files": ["which files does PR 56 change", "list the files changed in the pull request", "what did this PR touch"],
 "get_pull_request_status": ["are the CI checks passing on PR 56", "did the status checks on the pull request go green", "check the build status of the PR"],
 "update_pull_request_branch": ["update the PR branch with the latest main", "bring pull request 56 up to date with its base branch", "the PR is behind main, update it"],
 "get_pull_request_comments": ["show the review comments on PR 56", "what inline comments did reviewers leave on the pull request", "read the code review comments"],
 "get_pull_request_reviews": ["who approved pull request 56", "list the reviews on the PR", "has anyone reviewed my pull request yet"],
}

Q["gitlab"] = {
 "create_or_update_file": ["update the README in our GitLab project", "commit a config change to a file on GitLab", "create a new file in the GitLab repo on main", "edit .gitlab-ci.yml directly in GitLab"],
 "search_repositories": ["find a GitLab project named payments", "search GitLab for projects about kubernetes", "which GitLab projects match 'infra'"],
 "create_repository": ["create a new GitLab project", "make a private project on GitLab for the docs", "new GitLab repo called data-pipeline"],
 "get_file_contents": ["read the Makefile from the GitLab project", "show the contents of src/app.py on GitLab", "list the files in the GitLab repository root", "open the GitLab CI config of the project"],
 "push_files": ["push several files to GitLab in one commit", "commit these files together to the GitLab project"],
 "create_issue": ["open an issue in our GitLab project", "file a GitLab issue about the failing deploy", "create a GitLab ticket for the broken link"],
 "create_merge_request": ["open a merge request from feature-x to main", "create an MR on GitLab", "submit my branch for review as a merge request", "open a GitLab MR with this description"],
 "fork_repository": ["fork the GitLab project into my namespace", "make a personal fork of the project on GitLab"],
 "create_branch": ["create a branch on GitLab from main", "new GitLab branch called hotfix-12", "branch off develop in the GitLab project"],
}

Q["slack"] = {
 "slack_list_channels": ["list the channels in our Slack", "what Slack channels are there", "find the channel id of #general", "which public channels exist in the workspace"],
 "slack_post_message": ["post 'deploy finished' to #releases", "send a message to the team channel on Slack", "tell the #general channel that the build is green", "announce the outage in Slack", "share the summary in the marketing channel", "notify the team on Slack"],
 "slack_reply_to_thread": ["reply in the thread under that Slack message", "answer the question in the thread", "respond in-thread to the alert message", "follow up in the Slack thread with the fix"],
 "slack_add_reaction": ["add a thumbs up to the message", "react with :white_check_mark: to the deploy message", "put an eyes emoji on the request so they know I'm on it"],
 "slack_get_channel_history": ["what was said in #support today", "read the latest messages in the channel", "catch me up on #engineering", "show recent Slack messages in the incidents channel", "summarize the last 50 messages of the channel"],
 "slack_get_thread_replies": ["read all replies in that Slack thread", "what did people answer in the thread", "get the whole discussion under the message"],
 "slack_get_users": ["list everyone in the Slack workspace", "who is in our Slack", "find the Slack user id for Maria"],
 "slack_get_user_profile": ["what's Bob's title in his Slack profile", "get the profile of Slack user U123", "what's the email on that Slack account", "show the user's status and time zone"],
}

Q["google-maps"] = {
 "maps_geocode": ["get the coordinates of 1600 Amphitheatre Parkway", "latitude and longitude of the Eiffel Tower", "geocode this address", "where exactly is 10 Downing Street on the map"],
 "maps_reverse_geocode": ["what address is at 40.7128, -74.0060", "turn these GPS coordinates into a street address", "which city is at lat 48.85 lng 2.35", "reverse geocode the location"],
 "maps_search_places": ["find sushi restaurants in Seattle on Google Maps", "Google Places search for coffee shops near Union Square", "search Google Maps for hardware stores nearby", "gas stations around the airport", "hotels close to the convention center"],
 "maps_place_details": ["what are the opening hours of this restaurant", "get the phone number and reviews of the place", "is the museum open on Sunday", "details of the place with this place id"],
 "maps_distance_matrix": ["how far is each store from the warehouse", "travel times from three offices to the airport", "compare driving distances between these cities", "distance and duration between several origins and destinations"],
 "maps_elevation": ["what's the elevation of Denver", "how high above sea level is this point", "altitude of the trailhead coordinates"],
 "maps_directions": ["directions from the hotel to the stadium", "how do I get from Berlin Hauptbahnhof to the airport by transit", "driving route from San Francisco to LA", "walking directions to the museum", "how long does it take to cycle to work"],
}

Q["tavily"] = {
 "tavily_search": ["search with Tavily for the latest Fed rate decision", "use Tavily to find recent news about the election", "tavily web search for Python 3.13 release notes", "look up current information with Tavily"],
 "tavily_extract": ["extract the text of these two URLs with Tavily", "pull the article content from this link as markdown using tavily", "get raw page content from a list of URLs with Tavily"],
 "tavily_crawl": ["crawl docs.example.com two levels deep with Tavily", "tavily crawl the blog and collect all posts", "crawl the website starting from the homepage with Tavily"],
 "tavily_map": ["map the structure of the site with Tavily", "list all URLs on example.com using tavily map", "get the sitemap of a website via Tavily"],
 "tavily_research": ["do in-depth research with Tavily on solid-state batteries", "tavily research report on the EV market in Europe", "use Tavily to research the question across many sources"],
}

Q["mermaid"] = {
 "generate_mermaid_diagram": ["draw a flowchart of the login process", "make a sequence diagram of the API calls", "render this mermaid code as an image", "create a gantt chart for the project plan", "diagram the class hierarchy as mermaid", "turn this process description into a diagram", "generate an SVG of a state diagram"],
}

Q["brave-search"] = {
 "brave_web_search": ["search the web with Brave for kubernetes ingress examples", "brave search 'best budget laptops 2026'", "use Brave Search to look up the error message", "find websites about sourdough baking with Brave"],
 "brave_local_search": ["use Brave local search for plumbers in my area", "restaurants near me with ratings via Brave", "find a dentist in Austin with opening hours using Brave", "Brave local results for bike shops nearby"],
 "brave_video_search": ["Brave video search for how to change a bike tire", "search for YouTube tutorials on React hooks", "video results for 'sourdough starter'", "look for recent video clips of the launch"],
 "brave_image_search": ["Brave image search for the Golden Gate Bridge", "image search for red panda photos", "get images of mid-century modern chairs", "show me photos of the new iPhone"],
 "brave_news_search": ["Brave news search: chip shortage", "news articles from today about the storm", "what are the headlines about OpenAI this week", "recent news coverage of the merger", "breaking news on the earthquake"],
 "brave_summarizer": ["give me an AI summary of the Brave search results", "summarize what the web says about intermittent fasting with Brave's summarizer", "get a Brave summary with inline references for the search key"],
 "brave_llm_context": ["get grounding text from the web for this question", "fetch relevant page chunks for RAG about the new tax rules", "web content ready for the model to reason over about CRISPR", "give me extracted web passages, not just links, about rust async"],
 "brave_place_search": ["points of interest near these coordinates", "which city is 'springfield' — list the candidates", "find cafés within 500 m of 48.85, 2.35", "resolve the address 350 5th avenue near NYC", "places around the Louvre with opening hours"],
}

Q["google-calendar"] = {
 "list-calendars": ["which calendars do I have", "list my Google calendars", "show the calendar ids of my work and family calendars"],
 "list-events": ["what's on my calendar next Friday", "show my meetings for tomorrow", "what do I have this week", "list events on the team calendar in March", "am I busy on Monday morning", "what's my schedule today"],
 "search-events": ["find the meeting called 'quarterly review'", "when is my dentist appointment", "search my calendar for events with Alice", "look for the standup event"],
 "get-event": ["show the details of that calendar event", "who is invited to the event with id abc123", "get the location and attendees of the meeting"],
 "list-colors": ["which colors can I give calendar events", "list the color ids for events"],
 "create-event": ["schedule a meeting with Bob tomorrow at 3pm", "add lunch with Sarah on Friday at noon to my calendar", "block two hours on Thursday for deep work", "create a calendar event for the dentist on May 3", "put the flight on my calendar", "book a 30 minute call with the client next Tuesday"],
 "create-events": ["add all five sessions of the workshop to my calendar at once", "create several events in bulk", "put each sprint review for the quarter on the calendar"],
 "update-event": ["move my 2pm meeting to 4pm", "reschedule the standup to Wednesday", "change the location of the event to room 4", "add Carol as an attendee to the meeting", "rename the event to 'Planning'"],
 "delete-event": ["cancel my meeting on Friday", "delete the event from my calendar", "remove the duplicate calendar entry"],
 "get-freebusy": ["when are Alice and I both free this week", "is the team available Thursday afternoon", "find a free slot for a one-hour meeting", "check whether the room calendar is busy at 10"],
 "get-current-time": ["get the current time from the calendar server before creating the event", "current date and time in my calendar's time zone"],
 "respond-to-event": ["accept the meeting invitation", "decline the invite for Friday", "RSVP maybe to the offsite", "reply tentative to the event"],
 "manage-accounts": ["connect another Google account to the calendar", "which Google accounts are signed in for calendar", "remove my old work account from the calendar server"],
}
